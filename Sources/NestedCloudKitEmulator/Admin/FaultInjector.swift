import Foundation
import NIOConcurrencyHelpers

/// The faults in force, in the order they were added; the first that matches a request applies to it.
final class FaultInjector: Sendable {
    private let faults = NIOLockedValueBox<[EmulatorFault]>([])
    private let counter = NIOLockedValueBox(0)

    var all: [EmulatorFault] { faults.withLockedValue { $0 } }

    func add(_ fault: EmulatorFault) throws(ServerError) -> EmulatorFault {
        if let code = fault.serverErrorCode, ServerError.Code(rawValue: code) == nil {
            throw .badRequest(
                "unknown serverErrorCode \(code): \(ServerError.Code.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var fault = fault
        fault.id =
            "fault-"
            + String(
                counter.withLockedValue {
                    $0 += 1; return $0
                })
        let added = fault
        faults.withLockedValue { $0.append(added) }
        return added
    }

    func remove(id: String? = nil) {
        faults.withLockedValue { faults in faults.removeAll { id == nil || $0.id == id } }
    }

    /// The fault that applies to `request`, counted as used.
    func take(for request: EmulatorRequest) -> EmulatorFault? {
        faults.withLockedValue { faults in
            guard let index = faults.firstIndex(where: { $0.matches(request) }) else { return nil }
            let fault = faults[index]
            if let remaining = fault.remaining {
                if remaining <= 1 { faults.remove(at: index) } else { faults[index].remaining = remaining - 1 }
            }
            return fault
        }
    }
}
