fn main() {
    println!("roqsim");
}
