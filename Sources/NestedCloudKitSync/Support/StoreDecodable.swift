import NestedCloudKitCodable

#if compiler(>=6.2)
/// A model the store can decode: `CKDecodable`, with a conformance that isn't isolated to an actor
/// (`SendableMetatype`), since the store decodes models on its reading connection, inside the read transaction,
/// not on the caller's actor.
public typealias StoreDecodable = CKDecodable & SendableMetatype
#else
/// A model the store can decode.
public typealias StoreDecodable = CKDecodable
#endif
