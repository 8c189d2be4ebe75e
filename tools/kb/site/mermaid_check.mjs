// Parse mermaid diagrams with mermaid's own parser, for mermaid.py (kb.site.mermaid).
//
// Input (stdin): {"config": {...mermaid.initialize() options...},
//                 "diagrams": ["flowchart LR\n A --> B", ...]}
// Output (stdout): one JSON line per diagram, in input order, written as soon
// as that diagram is parsed: {"i": 0, "error": null | "mermaid's message"}.
// A failure before any diagram is parsed (mermaid or happy-dom missing) is a
// single line {"fatal": "..."}. Line by line, so that when the build stops a
// diagram that takes too long, it knows which one it was.
//
// Why a DOM: mermaid.parse() needs no layout, but mermaid sanitizes label
// text with DOMPurify while parsing (flowchart, class, state, gantt, mindmap,
// timeline ...). Without a `window`, DOMPurify's factory returns a stub that
// has no addHook(), and parsing fails with "DOMPurify.addHook is not a
// function". A stub of our own would have to imitate DOMPurify's checks of
// the DOM; happy-dom (pinned in package.json) is a real DOM implementation,
// and only its window and document are made global, before mermaid (and the
// DOMPurify it imports) is loaded.

// Nothing but results may reach stdout: mermaid's own logging goes to stderr.
for (const level of ["log", "info", "warn", "error", "debug", "trace"]) {
  console[level] = (...args) => process.stderr.write(args.join(" ") + "\n");
}

const emit = (record) => process.stdout.write(JSON.stringify(record) + "\n");

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function message(error) {
  const text = String(error?.message ?? error ?? "unknown error");
  return text.length > 2000 ? text.slice(0, 2000) + " …" : text;
}

async function main() {
  const request = await readStdin();
  let mermaid;
  try {
    const { Window } = await import("happy-dom");
    const window = new Window();
    globalThis.window = window;
    globalThis.document = window.document;
    mermaid = (await import("mermaid")).default;
    mermaid.initialize({ ...request.config, startOnLoad: false });
  } catch (error) {
    emit({ fatal: message(error) });
    return;
  }
  for (const [i, code] of request.diagrams.entries()) {
    try {
      await mermaid.parse(code);
      emit({ i, error: null });
    } catch (error) {
      emit({ i, error: message(error) });
    }
  }
}

await main();
// happy-dom's window may hold timers; the answer is complete (once stdout is
// flushed), so end here.
process.stdout.write("", () => process.exit(0));
