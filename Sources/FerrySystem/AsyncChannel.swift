import Synchronization

/// An unbounded queue from any number of producers to one consumer, read with `for await`: what `AsyncStream` with
/// its default (unbounded) buffering is, for the streams inside ferry that carry an element per frame or per write.
///
/// Why: `AsyncStream`'s storage is compiled in the standard library for any element, so every element pays for
/// generic code at run time: metadata lookups for `Optional<Element>`, `_Deque` and its storage, `CheckedContinuation`,
/// and `_Deque.removeFirst` through `RangeReplaceableCollection`'s generic implementation. `valgrind --tool=callgrind`
/// of a receiver of 1000 small files counted about 10 000 instructions an element there, 6 elements a file (18 % of
/// the receiver's instructions outside OpenSSL). This type is generic too, but `@inlinable`, so each use is compiled
/// for its element. Semantics as `AsyncStream`'s, for one consumer: `yield` never waits and keeps the order; `finish()`
/// ends the sequence after what is buffered and drops later elements; cancelling the consuming task ends it as well
/// (`next` returns nil, later elements are dropped). The consumer's `for await` passes its isolation, so a loop on an
/// actor is resumed on that actor without a hop through the global executor.
public final class AsyncChannel<Element: Sendable>: AsyncSequence, Sendable {
    /// A channel never fails: it ends.
    public typealias Failure = Never

    @usableFromInline
    enum Take {
        case element(Element)
        case end
        case wait
    }

    @usableFromInline
    struct State {
        /// Elements not yet taken from `head` on; taken slots are nil until the buffer is compacted.
        @usableFromInline var buffer: [Element?] = []
        @usableFromInline var head = 0
        /// The consumer waiting for the next element (never with elements buffered).
        @usableFromInline var waiter: UnsafeContinuation<Element?, Never>?
        @usableFromInline var finished = false

        @inlinable init() {}

        @inlinable
        mutating func take() -> Take {
            guard head < buffer.count else { return finished ? .end : .wait }
            let element = buffer[head]
            buffer[head] = nil
            head += 1
            if head == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024, head * 2 >= buffer.count {
                buffer.removeFirst(head)  // a consumer that never catches up: keep the buffer to what is unread
                head = 0
            }
            // Only `yield` appends, and never nil.
            return element.map(Take.element) ?? .end
        }

        @inlinable
        mutating func end() -> UnsafeContinuation<Element?, Never>? {
            finished = true
            defer { waiter = nil }
            return waiter
        }
    }

    @usableFromInline let state = Mutex(State())
    /// Called with each element as the consumer takes it (`next`, `takeBuffered`), on the consumer's task.
    @usableFromInline let onTake: (@Sendable (Element) -> Void)?

    /// An empty channel, not finished. `onTake` sees each element as the consumer takes it: a producer that bounds
    /// what waits in the channel counts it back there, so the consumer cannot forget to.
    @inlinable public init(onTake: (@Sendable (Element) -> Void)? = nil) {
        self.onTake = onTake
    }

    /// Appends `element` (or hands it to the waiting consumer); dropped once the channel is finished.
    @inlinable
    public func yield(_ element: Element) {
        let waiter = state.withLock { state -> UnsafeContinuation<Element?, Never>? in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.buffer.append(element)
            return nil
        }
        waiter?.resume(returning: element)
    }

    /// Ends the sequence: the consumer gets what is buffered, then nil. Idempotent.
    @inlinable
    public func finish() {
        state.withLock { $0.end() }?.resume(returning: nil)
    }

    /// The next element, or nil once finished and drained (or the consuming task is cancelled). One consumer only.
    @inlinable
    public func next(isolation actor: isolated (any Actor)? = #isolation) async -> Element? {
        let element = await nextElement(isolation: actor)
        if let element, let onTake { onTake(element) }
        return element
    }

    @inlinable
    func nextElement(isolation actor: isolated (any Actor)?) async -> Element? {
        switch state.withLock({ $0.take() }) {
        case .element(let element): return element
        case .end: return nil
        case .wait: break
        }
        return await withTaskCancellationHandler(
            operation: {
                await withUnsafeContinuation(isolation: actor) { (continuation: UnsafeContinuation<Element?, Never>) in
                    let taken = state.withLock { state -> Take in
                        let taken = state.take()
                        if case .wait = taken {
                            precondition(state.waiter == nil, "AsyncChannel has one consumer")
                            state.waiter = continuation
                        }
                        return taken
                    }
                    switch taken {
                    case .element(let element): continuation.resume(returning: element)
                    case .end: continuation.resume(returning: nil)
                    case .wait: break
                    }
                }
            },
            onCancel: {
                state.withLock { $0.end() }?.resume(returning: nil)
            }, isolation: actor)
    }

    /// Every element buffered now, in order, without waiting (none when nothing is): for a consumer that handles what
    /// has come together after `next` gave it one. One consumer only.
    @inlinable
    public func takeBuffered() -> [Element] {
        let taken = state.withLock { state -> [Element] in
            guard state.head < state.buffer.count else { return [] }
            let taken = state.buffer[state.head...].compactMap { $0 }
            state.buffer.removeAll(keepingCapacity: true)
            state.head = 0
            return taken
        }
        if let onTake { taken.forEach(onTake) }
        return taken
    }

    /// How many elements are buffered, not yet taken.
    @inlinable
    public var bufferedCount: Int {
        state.withLock { $0.buffer.count - $0.head }
    }

    /// The one consumer's iterator (`for await`).
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// Never fails: nil ends it.
        public typealias Failure = Never

        @usableFromInline let channel: AsyncChannel

        @inlinable init(channel: AsyncChannel) {
            self.channel = channel
        }

        /// The next element, or nil at the end (`AsyncChannel.next`).
        @inlinable
        public mutating func next() async -> Element? {
            await channel.next(isolation: nil)
        }

        /// The next element, or nil at the end, resumed on `actor` (what `for await` calls).
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await channel.next(isolation: actor)
        }
    }

    /// The iterator for the channel's one consumer.
    @inlinable
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(channel: self)
    }
}
