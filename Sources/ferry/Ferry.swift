@main
struct Ferry {
    static func main() async {}
}
