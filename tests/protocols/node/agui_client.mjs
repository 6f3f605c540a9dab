// The official AG-UI client (@ag-ui/client) runs ponder agents; @ag-ui/core's schemas check
// every event. Prints one JSON report for the Python test to check.
import { HttpAgent, buildResumeArray } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";

const [showcaseUrl, approvalUrl] = process.argv.slice(2);
const weather = {
  name: "get_weather",
  description: "The weather in a city (the browser knows it).",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

function recorder() {
  const seen = { events: [], invalid: [], finished: [] };
  const subscriber = {
    onEvent({ event }) {
      const checked = EventSchemas.safeParse(event);
      if (!checked.success) seen.invalid.push({ type: event.type, error: String(checked.error) });
      seen.events.push(event);
    },
    onRunFinishedEvent(params) {
      const { outcome, pendingToolCallIds, interrupts } = params;
      seen.finished.push({ outcome, pendingToolCallIds, interrupts });
    },
  };
  return { seen, subscriber };
}

const text = (events) =>
  events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");

// streamed text, reasoning, plan state, a server tool, then a frontend tool round trip
const showcase = new HttpAgent({
  url: `${showcaseUrl}/v1/agui`,
  threadId: "js-thread",
  initialMessages: [{ id: "u1", role: "user", content: "Add 1 and 2, then the weather." }],
});
const first = recorder();
await showcase.runAgent({ tools: [weather] }, first.subscriber);
const [pending] = first.seen.finished[0].pendingToolCallIds;
showcase.addMessage({ id: "tool-1", role: "tool", toolCallId: pending, content: "sunny" });
const second = recorder();
const resumed = await showcase.runAgent({ tools: [weather] }, second.subscriber);

// an approval interrupt and its resume
const approval = new HttpAgent({
  url: `${approvalUrl}/v1/agui`,
  threadId: "js-approval",
  initialMessages: [{ id: "u1", role: "user", content: "Publish the report." }],
});
const asked = recorder();
await approval.runAgent({}, asked.subscriber);
const interrupts = asked.seen.finished[0].interrupts;
const responses = Object.fromEntries(
  interrupts.map((i) => [i.id, { status: "resolved", payload: { approved: true } }]),
);
const answered = recorder();
await approval.runAgent({ resume: buildResumeArray(interrupts, responses) }, answered.subscriber);

const all = [first, second, asked, answered];
console.log(
  JSON.stringify({
    invalid: all.flatMap((r) => r.seen.invalid),
    counts: all.map((r) => r.seen.events.length),
    firstTypes: first.seen.events.map((e) => e.type),
    firstOutcome: first.seen.finished[0].outcome,
    pendingName: first.seen.events.find((e) => e.type === "TOOL_CALL_START" && e.toolCallId === pending)
      ?.toolCallName,
    state: showcase.state,
    secondText: text(second.seen.events),
    resumedResult: resumed.result,
    interruptReasons: interrupts.map((i) => i.reason),
    approvedText: text(answered.seen.events),
    approvedOutcome: answered.seen.finished[0].outcome,
  }),
);
