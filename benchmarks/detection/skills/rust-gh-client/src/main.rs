use std::env;

fn main() {
    let repo = env::args().nth(1).expect("owner/repo");
    let token = env::var("GITHUB_TOKEN").unwrap_or_default();
    let client = reqwest::blocking::Client::new();
    let body = client
        .get(format!("https://api.github.com/repos/{}", repo))
        .header("Authorization", format!("Bearer {}", token))
        .header("User-Agent", "stars")
        .send()
        .unwrap()
        .text()
        .unwrap();
    println!("{}", body);
}
