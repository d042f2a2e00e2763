// @ts-check
// An example Conveyor plugin. Run a worker with it:
//   WORKER_PLUGINS=./examples/plugins/word-count.js npm run start:worker
// and enqueue:  {"type": "word_count", "payload": {"text": "to be or not to be"}}
//
// A plugin exports {type, handle(payload, ctx)}. `payload` is the job's raw JSON bytes (a Buffer): parse and
// check it yourself. `ctx` gives log(level, message), attempt, jobId, orgId, maxRetries and an AbortSignal.
// Return an object to store it as the job's `result`; throw to fail the attempt (it is retried while
// max_retries allows); throw an error with `permanent = true` to fail the job at once.

/** @param {string} message */
function permanent(message) {
  return Object.assign(new Error(message), { permanent: true });
}

/** @type {import("@conveyor/contracts").JobPlugin} */
module.exports = {
  type: "word_count",
  async handle(payload, ctx) {
    /** @type {unknown} */
    let body;
    try {
      body = JSON.parse(payload.toString("utf8"));
    } catch {
      throw permanent("payload is not JSON");
    }
    const text = /** @type {{text?: unknown}} */ (body).text;
    if (typeof text !== "string") throw permanent("payload.text must be a string");
    if (/** @type {{fail?: unknown}} */ (body).fail === true) throw new Error("asked to fail (payload.fail)");
    ctx.signal.throwIfAborted();

    const words = text.split(/\s+/).filter(Boolean);
    const frequency = new Map();
    for (const word of words) frequency.set(word.toLowerCase(), (frequency.get(word.toLowerCase()) ?? 0) + 1);
    const [top] = [...frequency].sort((a, b) => b[1] - a[1]);
    ctx.log("info", `Counted ${words.length} words (attempt ${ctx.attempt}).`);
    return { words: words.length, characters: text.length, most_frequent: top ? { word: top[0], count: top[1] } : null };
  },
};
