import NestedCloudKitCodable

/// A model the store can decode: any `CKDecodable`. Its conformance isn't isolated to an actor (`CKDecodable`
/// refines `SendableMetatype`), since the store decodes models on its reading connection, inside the read
/// transaction, not on the caller's actor.
public typealias StoreDecodable = CKDecodable
