import { readFile } from "node:fs/promises";

const key = process.env.OPENAI_API_KEY;
if (!key) throw new Error("set OPENAI_API_KEY");
const form = new FormData();
form.append("purpose", "batch");
form.append("file", new Blob([await readFile(process.argv[2])]), "input.jsonl");
const res = await fetch("https://api.openai.com/v1/files", {
  method: "POST",
  headers: { Authorization: `Bearer ${key}` },
  body: form,
});
console.log((await res.json()).id);
