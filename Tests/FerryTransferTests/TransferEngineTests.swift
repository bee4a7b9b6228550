import Testing

@testable import FerryTransfer
