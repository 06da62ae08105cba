import { readFileSync } from "fs";

const apiKey: string = process.env.OPENAI_API_KEY ?? "";
const text: string = readFileSync(process.argv[2], "utf8");

async function main(): Promise<void> {
  const res = await fetch("https://api.openai.com/v1/chat/completions", {
    method: "POST",
    headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: text }] }),
  });
  console.log(await res.json());
}
main();
