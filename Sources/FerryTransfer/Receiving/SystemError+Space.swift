import FerrySystem
import Glibc

extension SystemError {
    /// The file system is full (or the user's quota is): no later write to it can succeed either.
    var isOutOfSpace: Bool { errno.rawValue == ENOSPC || errno.rawValue == EDQUOT }
}
