import Foundation

extension CloudSchema {
    /// What deploying this schema onto a deployed one would change; see ``Deployment``.
    public func deployment(onto deployed: CloudSchema) -> Deployment {
        var deployment = Deployment(refusals: [], additions: [], retained: [], schema: deployed)
        for (typeName, type) in recordTypes.sorted(by: { $0.key < $1.key }) {
            guard let deployedType = deployed.recordTypes[typeName] else {
                deployment.additions.append(.recordTypeAdded(typeName))
                deployment.schema.recordTypes[typeName] = type
                continue
            }
            deployment.schema.recordTypes[typeName] = Self.deploy(type, onto: deployedType, recording: &deployment)
        }
        for typeName in deployed.recordTypes.keys.sorted() where recordTypes[typeName] == nil {
            deployment.retained.append(.recordTypeRetained(typeName))
        }
        deployment.schema.roles.formUnion(roles)
        return deployment
    }

    /// A deployed record type with what the models' adds; the differences recorded.
    private static func deploy(_ type: RecordType, onto deployed: RecordType, recording deployment: inout Deployment)
        -> RecordType
    {
        var result = deployed
        let removed = deployed.userFields.filter { type.fields[$0.key] == nil }
        let added = type.userFields.filter { deployed.fields[$0.key] == nil }
        for (name, field) in type.fields.sorted(by: { $0.key < $1.key }) {
            guard var deployedField = deployed.fields[name] else {
                deployment.additions.append(.fieldAdded(name, field, in: type.name))
                result.fields[name] = field
                continue
            }
            guard holdsTheSameValues(deployed: deployedField.type, models: field.type) else {
                deployment.refusals.append(
                    .fieldTypeChanged(
                        name, in: type.name, deployed: deployedField.type, models: field.type,
                        renamedFrom: removed.filter { $0.value.type == field.type }.keys.sorted().first))
                continue
            }
            let newIndexes = field.indexes.subtracting(deployedField.indexes)
            if !newIndexes.isEmpty {
                deployment.additions.append(.indexesAdded(newIndexes, to: name, in: type.name))
                deployedField.indexes.formUnion(newIndexes)
                result.fields[name] = deployedField
            }
            let oldIndexes = deployedField.indexes.subtracting(field.indexes)
            if !oldIndexes.isEmpty { deployment.retained.append(.indexesRetained(oldIndexes, on: name, in: type.name)) }
        }
        for (name, field) in removed.sorted(by: { $0.key < $1.key }) {
            let renamedTo = added.filter { $0.value.type == field.type }.keys.sorted().first
            deployment.retained.append(.fieldRetained(name, field.type, in: type.name, renamedTo: renamedTo))
        }
        return result
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
    /// - Throws: ``CloudSchemaError/Code/notDeployable`` with the refused changes (``CloudSchemaError/refusals``):
    ///   fields whose type the models change.
    @discardableResult
    public func checkDeployable(against deployed: CloudSchema) throws(CloudSchemaError) -> Deployment {
        let deployment = deployment(onto: deployed)
        guard deployment.refusals.isEmpty else {
            throw CloudSchemaError(
                .notDeployable, recordType: deployment.refusals[0].recordType,
                field: deployment.refusals[0].field,
                reason: "CloudKit refuses to deploy the models' schema onto production: "
                    + deployment.refusals.map(\.description).joined(separator: "; "),
                recoverySuggestion: "Change the models so that every deployed field keeps its type",
                refusals: deployment.refusals)
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
