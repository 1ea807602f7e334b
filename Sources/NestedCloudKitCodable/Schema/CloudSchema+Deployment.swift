import Foundation

extension CloudSchema {
    /// What deploying a schema onto a deployed one (production's, exported with `cktool export-schema`) changes:
    /// what CloudKit refuses, what it adds, and what stays because CloudKit never deletes it.
    ///
    /// CloudKit deploys additively: a deployed record type or field is never deleted and never changes type
    /// (encryption and list-ness included), and a schema that would lose one is refused whole (Apple, "Integrating
    /// a Text-Based Schema into Your Workflow" and "Deploying an iCloud Container's Schema"). ``schema`` is the
    /// deployed schema with the additions: the file to import into development and deploy.
    public struct Deployment: Sendable, Hashable {
        /// One difference between the schemas, with what it means and what to do.
        public struct Change: Sendable, Hashable, CustomStringConvertible {
            /// The kind of difference.
            public enum Kind: Sendable, Hashable {
                /// A deployed field the models give another type: CloudKit refuses it.
                case fieldTypeChanged(deployed: FieldType, models: FieldType)
                /// A record type the deployed schema lacks.
                case recordTypeAdded
                /// A field the deployed record type lacks.
                case fieldAdded(FieldType)
                /// Indexes a field lacks in the deployed schema: production refuses the queries that need them
                /// until they are deployed.
                case indexesAdded(Indexes)
                /// A deployed record type no model has: it stays.
                case recordTypeRetained
                /// A deployed field no model writes: it stays, and records keep their values in it.
                case fieldRetained(FieldType)
                /// Deployed indexes the models' queries don't need: they stay, for the queries of older versions.
                case indexesRetained(Indexes)
            }

            /// The kind of difference.
            public var kind: Kind
            /// The record type.
            public var recordType: String
            /// The field, for a difference in one.
            public var field: String?
            /// What the difference means and what to do about it.
            public var description: String
        }

        /// Changes CloudKit refuses to deploy: each needs a change to the models.
        public var refusals: [Change]
        /// What deploying adds: record types, fields and indexes the models need and production lacks. An app
        /// version that needs them fails in production until they are deployed.
        public var additions: [Change]
        /// What production has and the models don't, which deploying keeps.
        public var retained: [Change]
        /// The deployed schema with the additions: what to import (`cktool import-schema`) and deploy. It keeps
        /// every deployed record type, field, index, grant and role, and a deployed field's declaration where the
        /// models give it another type.
        public var schema: CloudSchema

        /// Whether production already has all the models need: nothing to add, nothing refused.
        public var isComplete: Bool { refusals.isEmpty && additions.isEmpty }
    }
}

extension CloudSchema.Deployment.Change {
    // The changes with what they mean, in one place.

    static func recordTypeAdded(_ type: String) -> Self {
        Self(
            kind: .recordTypeAdded, recordType: type,
            description: "\(type) is a new record type: deploy it before a version that writes it reaches "
                + "production, which refuses records of types it doesn't have")
    }

    static func fieldAdded(_ name: String, _ field: CloudSchema.Field, in type: String) -> Self {
        Self(
            kind: .fieldAdded(field.type), recordType: type, field: name,
            description: "\(type).\(name) (\(field)) is a new field: deploy it before a version that writes it "
                + "reaches production, which refuses records with fields it doesn't have")
    }

    static func fieldTypeChanged(
        _ name: String, in type: String, deployed: CloudSchema.FieldType, models: CloudSchema.FieldType,
        renamedFrom: String?
    ) -> Self {
        Self(
            kind: .fieldTypeChanged(deployed: deployed, models: models), recordType: type, field: name,
            description: "\(type).\(name) is \(deployed) in production and \(models) in the models: CloudKit never "
                + "changes a deployed field's type"
                + (models.isEncrypted != deployed.isEncrypted ? " (encrypting a field included)" : "")
                + ". Write the new type to a new field (@CloudField(name:) or a coding key), and read the old one "
                + "while older versions write it"
                + (renamedFrom.map { "; or, if this is \($0) renamed, name it so" } ?? ""))
    }

    static func indexesAdded(_ indexes: CloudSchema.Indexes, to name: String, in type: String) -> Self {
        Self(
            kind: .indexesAdded(indexes), recordType: type, field: name,
            description: "\(type).\(name) needs \(indexes), which production lacks: it refuses the queries that "
                + "need the index until the schema is deployed")
    }

    static func indexesRetained(_ indexes: CloudSchema.Indexes, on name: String, in type: String) -> Self {
        Self(
            kind: .indexesRetained(indexes), recordType: type, field: name,
            description: "\(type).\(name) is \(indexes) in production, which the models' queries don't need: it "
                + "stays, for the queries of versions already installed; drop it in the CloudKit console once none "
                + "runs them")
    }

    static func fieldRetained(_ name: String, _ fieldType: CloudSchema.FieldType, in type: String, renamedTo: String?)
        -> Self
    {
        Self(
            kind: .fieldRetained(fieldType), recordType: type, field: name,
            description: "\(type).\(name) (\(fieldType)) is in production and no model writes it: CloudKit never "
                + "deletes a deployed field, so it stays, and the records keep their values"
                + (renamedTo.map {
                    ". If \($0) is \(name) renamed, keep the field's name with @CloudField(name: \"\(name)\") or a "
                        + "coding key, or the records written before lose the value"
                } ?? ""))
    }

    static func recordTypeRetained(_ type: String) -> Self {
        Self(
            kind: .recordTypeRetained, recordType: type,
            description: "\(type) is a record type in production that no model is: CloudKit never deletes a "
                + "deployed record type, so it stays")
    }
}
