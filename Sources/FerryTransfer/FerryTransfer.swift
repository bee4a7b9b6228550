/// The transfer engine: offers, chunks, flow control, resume and publication over a `Session`.
public enum FerryTransfer {}
