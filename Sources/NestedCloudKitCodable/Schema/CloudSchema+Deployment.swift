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

    /// What deploying this schema onto a deployed one would change; see ``Deployment``.
    public func deployment(onto deployed: CloudSchema) -> Deployment {
        var refusals: [Deployment.Change] = []
        var additions: [Deployment.Change] = []
        var retained: [Deployment.Change] = []
        var result = deployed
        for (typeName, type) in recordTypes.sorted(by: { $0.key < $1.key }) {
            guard var deployedType = deployed.recordTypes[typeName] else {
                additions.append(
                    Deployment.Change(
                        kind: .recordTypeAdded, recordType: typeName,
                        description: "\(typeName) is a new record type: deploy it before a version that writes it "
                            + "reaches production, which refuses records of types it doesn't have"))
                result.recordTypes[typeName] = type
                continue
            }
            let removed = deployedType.userFields.filter { type.fields[$0.key] == nil }
            let added = type.userFields.filter { deployedType.fields[$0.key] == nil }
            for (name, field) in type.fields.sorted(by: { $0.key < $1.key }) {
                guard var deployedField = deployedType.fields[name] else {
                    additions.append(
                        Deployment.Change(
                            kind: .fieldAdded(field.type), recordType: typeName, field: name,
                            description: "\(typeName).\(name) (\(field)) is a new field: deploy it before a version "
                                + "that writes it reaches production, which refuses records with fields it doesn't have"
                        ))
                    deployedType.fields[name] = field
                    continue
                }
                if !Self.holdsTheSameValues(deployed: deployedField.type, models: field.type) {
                    let renamed = removed.filter { $0.value.type == field.type }.keys.sorted()
                    refusals.append(
                        Deployment.Change(
                            kind: .fieldTypeChanged(deployed: deployedField.type, models: field.type),
                            recordType: typeName, field: name,
                            description: "\(typeName).\(name) is \(deployedField.type) in production and \(field.type) "
                                + "in the models: CloudKit never changes a deployed field's type"
                                + (field.type.isEncrypted != deployedField.type.isEncrypted
                                    ? " (encrypting a field included)" : "")
                                + ". Write the new type to a new field (@CloudField(name:) or a coding key), and read "
                                + "the old one while older versions write it"
                                + (renamed.isEmpty ? "" : "; or, if this is \(renamed[0]) renamed, name it so")))
                    continue
                }
                let newIndexes = field.indexes.subtracting(deployedField.indexes)
                if !newIndexes.isEmpty {
                    additions.append(
                        Deployment.Change(
                            kind: .indexesAdded(newIndexes), recordType: typeName, field: name,
                            description: "\(typeName).\(name) needs \(newIndexes), which production lacks: it refuses "
                                + "the queries that need the index until the schema is deployed"))
                    deployedField.indexes.formUnion(newIndexes)
                    deployedType.fields[name] = deployedField
                }
                let oldIndexes = deployedField.indexes.subtracting(field.indexes)
                if !oldIndexes.isEmpty {
                    retained.append(
                        Deployment.Change(
                            kind: .indexesRetained(oldIndexes), recordType: typeName, field: name,
                            description: "\(typeName).\(name) is \(oldIndexes) in production, which the models' "
                                + "queries don't need: it stays, for the queries of versions already installed; "
                                + "drop it in the CloudKit console once none runs them"))
                }
            }
            for (name, field) in removed.sorted(by: { $0.key < $1.key }) {
                let renamedTo = added.filter { $0.value.type == field.type }.keys.sorted()
                retained.append(
                    Deployment.Change(
                        kind: .fieldRetained(field.type), recordType: typeName, field: name,
                        description: "\(typeName).\(name) (\(field.type)) is in production and no model writes it: "
                            + "CloudKit never deletes a deployed field, so it stays, and the records keep their values"
                            + (renamedTo.isEmpty
                                ? ""
                                : ". If \(renamedTo[0]) is \(name) renamed, keep the field's name with "
                                    + "@CloudField(name: \"\(name)\") or a coding key, or the records written before "
                                    + "lose the value")))
            }
            result.recordTypes[typeName] = deployedType
        }
        for (typeName, _) in deployed.recordTypes.sorted(by: { $0.key < $1.key }) where recordTypes[typeName] == nil {
            retained.append(
                Deployment.Change(
                    kind: .recordTypeRetained, recordType: typeName,
                    description: "\(typeName) is a record type in production that no model is: CloudKit never deletes "
                        + "a deployed record type, so it stays"))
        }
        result.roles.formUnion(roles)
        return Deployment(refusals: refusals, additions: additions, retained: retained, schema: result)
    }

    /// Checks that CloudKit would deploy this schema onto a deployed one, and says what deploying changes.
    ///
    /// Call it from a test with the schema exported from production (`cktool export-schema --environment
    /// production`), kept in the repository:
    ///
    /// ```swift
    /// @Test func theModelsDeployOntoProduction() throws {
    ///     let production = try CloudSchema(parsing: String(contentsOf: productionSchemaFile, encoding: .utf8))
    ///     let deployment = try CloudSchema(models: [Folder.self, Note.self]).checkDeployable(against: production)
    ///     // Before a release: production has everything this version writes and queries.
    ///     #expect(deployment.additions.isEmpty, "deploy schema.ckdb first: \(deployment.additions)")
    /// }
    /// ```
    ///
    /// - Returns: The deployment: what it adds, what stays, and the schema to import.
    /// - Throws: ``CloudSchemaError/Code/notDeployable(_:)`` with the refused changes: fields whose type the
    ///   models change.
    @discardableResult
    public func checkDeployable(against deployed: CloudSchema) throws(CloudSchemaError) -> Deployment {
        let deployment = deployment(onto: deployed)
        guard deployment.refusals.isEmpty else {
            throw CloudSchemaError(
                .notDeployable(deployment.refusals), recordType: deployment.refusals[0].recordType,
                field: deployment.refusals[0].field,
                reason: "CloudKit refuses to deploy the models' schema onto production: "
                    + deployment.refusals.map(\.description).joined(separator: "; "),
                recoverySuggestion: "Change the models so that every deployed field keeps its type")
        }
        return deployment
    }

    /// Whether a deployed field holds the values the models write: the same type, or a number CloudKit fixed to
    /// that type when it made the field just in time (`NUMBER PREFERRED AS INT64` for `INT64`).
    private static func holdsTheSameValues(deployed: FieldType, models: FieldType) -> Bool {
        if deployed == models { return true }
        guard deployed.base == .number, let preferred = deployed.preferredNumber else { return false }
        return FieldType(preferred, encrypted: deployed.isEncrypted, list: deployed.isList) == models
    }
}
