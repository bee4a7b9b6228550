@main
struct FerryBench {
    static func main() async {}
}
