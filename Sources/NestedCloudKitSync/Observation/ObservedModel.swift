import Foundation
import NestedCloudKitCodable
import Observation

/// One model, by identifier, that a view holds and that follows the store: what SQLiteData's `@FetchOne` gives a
/// view.
///
/// ```swift
/// struct NoteDetail: View {
///     @Environment(\.syncStore) private var store   // an `@Entry` of the app's EnvironmentValues
///     @State private var note: ObservedModel<Note>
///
///     init(id: String) { _note = State(initialValue: ObservedModel(Note.self, id: id)) }
///
///     var body: some View {
///         Text(note.model?.title ?? "")
///             .task { note.store = store }
///     }
/// }
/// ```
///
/// As ``ObservedQuery``: nothing is read when it is made; the first read of ``model``, ``isLoaded`` or ``error``
/// with a ``store`` starts an observation (``SyncStore/observe(_:id:in:)-hjct``), which delivers on the main actor
/// after every transaction that changes the model. Changing ``id``, ``zoneID`` or ``store`` observes again.
@MainActor
@Observable
public final class ObservedModel<Model: CKDecodable & Identifiable> {
    /// The model at the last change; `nil` before the first result, and while the store doesn't have it.
    public var model: Model? { result.value }

    /// Whether a result arrived (``model`` may still be `nil`: the store doesn't have it).
    public var isLoaded: Bool { result.isLoaded }

    /// Why the last read failed (a record that can't be decoded, a closed store); `nil` while reads succeed.
    public var error: (any Error)? { result.error }

    /// The model's identifier; setting another one observes that model.
    public var id: Model.ID {
        didSet { if id != oldValue { result.change(Self.read(id, zoneID, isDuplicate)) } }
    }

    /// The zone; the store's ``SyncStore/zoneID`` if `nil`.
    public var zoneID: CloudRecord.ZoneID? {
        didSet { if zoneID != oldValue { result.change(Self.read(id, zoneID, isDuplicate)) } }
    }

    /// The store it reads; `nil` until the view has one. Setting another one observes it.
    public var store: SyncStore? {
        get { result.store }
        set { result.store = newValue }
    }

    @ObservationIgnored private let result: StoreResult<Model?>
    /// Which results are equal, so that an equal one isn't delivered: `==` for an `Equatable` model.
    @ObservationIgnored private let isDuplicate: (@Sendable (Model?, Model?) -> Bool)?

    /// How many observations it started, for the tests.
    var observationsStarted: Int { result.observationsStarted }

    /// A model of a store, by identifier, read once something reads it.
    ///
    /// - Parameters:
    ///   - type: The model's type.
    ///   - id: Its identifier.
    ///   - zoneID: Its zone; the store's if `nil`.
    ///   - store: The store, or `nil` to give it later (``store``).
    ///
    /// A change that leaves the model equal delivers nothing when `Model` is `Equatable` and this call knows it.
    public convenience init(
        _ type: Model.Type, id: Model.ID, in zoneID: CloudRecord.ZoneID? = nil, store: SyncStore? = nil
    ) {
        self.init(type, id: id, in: zoneID, store: store, removingDuplicates: nil)
    }

    init(
        _ type: Model.Type, id: Model.ID, in zoneID: CloudRecord.ZoneID?, store: SyncStore?,
        removingDuplicates isDuplicate: (@Sendable (Model?, Model?) -> Bool)?
    ) {
        self.id = id
        self.zoneID = zoneID
        self.isDuplicate = isDuplicate
        result = StoreResult(nil, store: store, read: Self.read(id, zoneID, isDuplicate))
    }

    private static func read(
        _ id: Model.ID, _ zoneID: CloudRecord.ZoneID?, _ isDuplicate: (@Sendable (Model?, Model?) -> Bool)?
    ) -> (SyncStore) -> StoreObservation<Model?> {
        { store in store.observe(Model.self, id: id, in: zoneID, removingDuplicates: isDuplicate) }
    }
}

extension ObservedModel where Model: Equatable {
    /// A model of a store, by identifier, read once something reads it; a change that leaves it equal delivers
    /// nothing.
    ///
    /// - Parameters:
    ///   - type: The model's type.
    ///   - id: Its identifier.
    ///   - zoneID: Its zone; the store's if `nil`.
    ///   - store: The store, or `nil` to give it later (``store``).
    public convenience init(
        _ type: Model.Type, id: Model.ID, in zoneID: CloudRecord.ZoneID? = nil, store: SyncStore? = nil
    ) {
        self.init(type, id: id, in: zoneID, store: store, removingDuplicates: { $0 == $1 })
    }
}
