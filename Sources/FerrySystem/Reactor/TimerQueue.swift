/// What a timer does when it ends: called exactly once, with nil when its deadline passed, or with the
/// error that ended it early (cancellation, reactor shutdown).
typealias TimerAction = @Sendable ((any Error)?) -> Void

/// The reactor's pending deadlines: a binary min-heap of (deadline, id) plus the live actions by id.
///
/// Why: `sleep(until:)`, connect timeouts and accept back-off all need deadlines; one heap read by the
/// reactor thread turns the earliest into the `epoll_wait` timeout. Cancelled timers are removed from
/// `actions` at once and from the heap lazily (compacted when stale entries dominate), so cancelling is O(1).
struct TimerQueue {
    private var heap: [(deadline: ContinuousClock.Instant, id: UInt64)] = []
    private var actions: [UInt64: TimerAction] = [:]

    /// Number of live (not yet fired or cancelled) timers.
    var count: Int { actions.count }

    /// Adds a timer; `id` must be unique.
    mutating func insert(id: UInt64, deadline: ContinuousClock.Instant, action: @escaping TimerAction) {
        actions[id] = action
        heap.append((deadline, id))
        siftUp(heap.count - 1)
        if heap.count > 64 && heap.count > 2 * actions.count { compact() }
    }

    /// Removes a live timer and returns its action (for the caller to run), or nil if it already ended.
    mutating func remove(id: UInt64) -> TimerAction? {
        actions.removeValue(forKey: id)
    }

    /// The earliest live deadline, dropping cancelled entries from the top of the heap.
    mutating func earliestDeadline() -> ContinuousClock.Instant? {
        while let top = heap.first {
            if actions[top.id] != nil { return top.deadline }
            popTop()
        }
        return nil
    }

    /// Removes and returns the actions of every timer whose deadline is at or before `now`.
    mutating func popExpired(now: ContinuousClock.Instant) -> [TimerAction] {
        var expired: [TimerAction] = []
        while let top = heap.first, top.deadline <= now {
            popTop()
            if let action = actions.removeValue(forKey: top.id) { expired.append(action) }
        }
        return expired
    }

    /// Removes and returns every live action (for shutdown).
    mutating func removeAll() -> [TimerAction] {
        let all = Array(actions.values)
        actions.removeAll()
        heap.removeAll()
        return all
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
    }

    private mutating func compact() {
        heap.removeAll { actions[$0.id] == nil }
        var index = heap.count / 2
        while index > 0 {
            index -= 1
            siftDown(index)
        }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            let right = left + 1
            var smallest = left
            if right < heap.count && heap[right].deadline < heap[left].deadline { smallest = right }
            guard heap[smallest].deadline < heap[parent].deadline else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
