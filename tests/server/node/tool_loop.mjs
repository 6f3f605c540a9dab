// The npm `openai` client against ponder's endpoint: a client-side tool loop, streamed and not,
// and a typed answer for a JSON-schema response_format.
// Usage: node tool_loop.mjs BASE_URL  (prints one JSON object with what it saw)
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.argv[2], apiKey: "unused", maxRetries: 0 });
const tools = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "The weather in a city.",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];
const question = { role: "user", content: "What is the weather in Paris?" };

const first = await client.chat.completions.create({ model: "m", messages: [question], tools });
const message = first.choices[0].message;
const call = message.tool_calls[0];
const history = [question, message, { role: "tool", tool_call_id: call.id, content: "snow" }];
const second = await client.chat.completions.create({ model: "m", messages: history, tools });

const stream = await client.chat.completions.create({
  model: "m",
  messages: [question],
  tools,
  stream: true,
});
const names = [];
let finish = null;
for await (const chunk of stream) {
  for (const choice of chunk.choices) {
    for (const delta of choice.delta.tool_calls ?? []) names.push(delta.function?.name);
    finish = choice.finish_reason ?? finish;
  }
}
const report = {
  type: "object",
  properties: { city: { type: "string" }, sky: { type: "string" } },
  required: ["city", "sky"],
  additionalProperties: false,
};
const typed = await client.chat.completions.create({
  model: "m",
  messages: [question],
  response_format: { type: "json_schema", json_schema: { name: "report", schema: report, strict: true } },
});
let refused = null;
try {
  await client.chat.completions.create({ model: "m", messages: [question], n: 3 });
} catch (error) {
  refused = { status: error.status, param: error.param };
}
const models = (await client.models.list()).data.map((m) => m.id);
console.log(
  JSON.stringify({
    first: { finish: first.choices[0].finish_reason, name: call.function.name, args: call.function.arguments },
    second: { content: second.choices[0].message.content, sameRun: second.id === first.id },
    streamed: { names, finish },
    typed: JSON.parse(typed.choices[0].message.content),
    refused,
    models,
  }),
);
