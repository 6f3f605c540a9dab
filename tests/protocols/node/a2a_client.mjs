// The official A2A JS client (@a2a-js/sdk) sends, streams, gets and cancels ponder tasks.
// Prints one JSON report for the Python test to check.
import { randomUUID } from "node:crypto";
import { Role, TaskState } from "@a2a-js/sdk";
import { ClientFactory } from "@a2a-js/sdk/client";

const [plainUrl, approvalUrl] = process.argv.slice(2);
const state = (task) => TaskState[task.status.state];
const textOf = (task) =>
  task.artifacts.flatMap((a) => a.parts).map((p) => p.content?.value ?? "").join("");
const message = (text, task) => ({
  messageId: randomUUID(),
  contextId: task?.contextId ?? "",
  taskId: task?.id ?? "",
  role: Role.ROLE_USER,
  parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});
const send = async (client, text, task) => {
  const got = await client.sendMessage({ tenant: "", message: message(text, task), configuration: undefined, metadata: undefined });
  return got.payload?.value ?? got;
};

const factory = new ClientFactory();
const plain = await factory.createFromUrl(plainUrl);
const sent = await send(plain, "What is the capital of France?");
const got = await plain.getTask({ tenant: "", id: sent.id, historyLength: undefined });
const streamed = [];
for await (const item of plain.sendMessageStream({ tenant: "", message: message("Again?"), configuration: undefined, metadata: undefined })) {
  const value = item.payload?.value;
  streamed.push([item.payload?.$case, value?.status ? TaskState[value.status.state] : null]);
}

const approval = await factory.createFromUrl(approvalUrl);
const waiting = await send(approval, "Publish the report.");
const done = await send(approval, "approve", waiting);
const other = await send(approval, "Publish the report.");
const cancelled = await approval.cancelTask({ tenant: "", id: other.id, metadata: undefined });
let unknown = null;
try {
  await plain.getTask({ tenant: "", id: "f".repeat(32), historyLength: undefined });
} catch (error) {
  unknown = error.constructor.name;
}

console.log(
  JSON.stringify({
    card: (await plain.getAgentCard()).name,
    sent: [state(sent), textOf(sent)],
    got: [got.id === sent.id, state(got), textOf(got)],
    streamed,
    waiting: [state(waiting), waiting.status.message.parts[0].content.value],
    done: [done.id === waiting.id, state(done), textOf(done)],
    cancelled: [state(cancelled), state(await approval.getTask({ tenant: "", id: other.id }))],
    unknown,
  }),
);
