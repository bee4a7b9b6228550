import Testing

/// Every suite of this target, one at a time.
///
/// Why: these tests run `ferry` processes and wait for them by blocking their thread. Swift Testing runs them on
/// the cooperative pool, which has one thread per core; several such suites at once on a 2-core machine left no
/// thread for the in-process async tests of the other targets (sessions missed their heartbeats). Serialized, at
/// most one pool thread waits on a child process at a time.
@Suite(.serialized) enum IntegrationTests {}
