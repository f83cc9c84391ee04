/**
 * `offload-kit serve [--port=N] [--host=127.0.0.1]`: serves the inspector page (dist/inspector/, built
 * from src/inspector/ by `npm run build`) and nothing else, on this machine only unless told otherwise.
 * The first line of stdout is the page's address (`http://127.0.0.1:N/`), so a script can read it;
 * `--port=0` takes any free port. Files dropped on the page are read in the browser: the server only ever
 * answers GET and HEAD for the page's own four files, read once at start.
 *
 * A request whose Host header names another site is refused (DNS rebinding: a page elsewhere cannot
 * reach this server through a name that resolves to 127.0.0.1).
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { stringValue } from "../args.js";
import { printError, printWarning } from "../io.js";
import { httpModule } from "../../node/builtins.js";
import type { Subcommand } from "./common.js";
import { KIT_CATEGORY as category, VERSION_TEXT, examplesHelp, usageError } from "./common.js";

export const DEFAULT_SERVE_PORT = 8417;

/** The page's files and their types: all that is served. */
const PAGE_FILES: Readonly<Record<string, string>> = {
  "index.html": "text/html; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "worker.js": "text/javascript; charset=utf-8",
};

/** Same policy as the page's own meta tag: its scripts, its worker and WebAssembly; nothing from elsewhere. */
const CSP = "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; connect-src 'self'";

/** dist/inspector/ seen from the bundled bin (dist/bin/), the compiled CLI (dist/cli/kit/) or the sources (src/cli/kit/). */
function pageFolder(): string | undefined {
  for (const relative of ["../inspector/", "../../inspector/", "../../../dist/inspector/"]) {
    const folder = fileURLToPath(new URL(relative, import.meta.url));
    try {
      readFileSync(`${folder}index.html`);
      return folder;
    } catch {
      // Not this layout.
    }
  }
  return undefined;
}

function loadPage(folder: string): Map<string, { body: Buffer; type: string }> {
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const [name, type] of Object.entries(PAGE_FILES)) files.set(`/${name}`, { body: readFileSync(`${folder}${name}`), type });
  files.set("/", files.get("/index.html")!);
  return files;
}

function urlHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export const serve: Subcommand = {
  summary: "Serve the inspector page (drop files on it to see their bundles, sizes and GPU fit; nothing is uploaded): [--port=N] [--host=127.0.0.1].",
  spec: () => ({
    overview: "offload-kit serve: serve the inspector page on this machine\n",
    options: [
      { name: "port", kind: "string", valueName: "N", description: `Port to listen on (default ${DEFAULT_SERVE_PORT}; 0 takes any free port)`, category },
      { name: "host", kind: "string", valueName: "address", description: "Address to listen on (default 127.0.0.1: this machine only)", category },
    ],
    version: VERSION_TEXT,
    epilogue: examplesHelp([
      { command: "offload-kit serve", what: `Open http://127.0.0.1:${DEFAULT_SERVE_PORT}/ in a browser on this machine and drop files on the page; Ctrl-C stops it` },
      { command: "offload-kit serve --port=0", what: "Any free port (the address is the first line on stdout)" },
      { command: "offload-kit serve --host=0.0.0.0 --port=8080", what: "Reachable from other machines too: the page reads dropped files in the browser, nothing is uploaded" },
    ]),
  }),
  run(values, { name, io }) {
    const portText = stringValue(values, "port");
    const port = portText === "" ? DEFAULT_SERVE_PORT : Number(portText);
    if (!/^\d+$/.test(portText || "0") || !Number.isInteger(port) || port > 65535) return usageError(io, name, `--port must be a number from 0 to 65535, not '${portText}'`);
    const host = stringValue(values, "host") || "127.0.0.1";
    const folder = pageFolder();
    if (folder === undefined) {
      printError(io, name, "the inspector page is not built (dist/inspector/ is missing): run 'npm run build'");
      return 1;
    }
    let files: Map<string, { body: Buffer; type: string }>;
    try {
      files = loadPage(folder);
    } catch (e) {
      printError(io, name, `the inspector page in ${folder} is incomplete: ${e instanceof Error ? e.message : String(e)}; run 'npm run build'`);
      return 1;
    }
    if (!isLoopback(host)) printWarning(io, name, `serving on ${host}: other machines that reach it can load the page (files are still read only in their browsers)`);

    return new Promise<number>((resolve) => {
      let allowedHosts = new Set<string>();
      const server = httpModule().createServer((request: IncomingMessage, response: ServerResponse) => {
        const path = (request.url ?? "/").split("?")[0]!;
        const file = files.get(path);
        const send = (status: number, type: string, body: string | Buffer) => {
          response.writeHead(status, {
            "Content-Type": type,
            "Content-Length": Buffer.byteLength(body),
            "Cache-Control": "no-cache",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": CSP,
            "Referrer-Policy": "no-referrer",
          });
          response.end(request.method === "HEAD" ? undefined : body);
        };
        if (!allowedHosts.has((request.headers.host ?? "").toLowerCase())) send(421, "text/plain; charset=utf-8", "misdirected request\n");
        else if (request.method !== "GET" && request.method !== "HEAD") send(405, "text/plain; charset=utf-8", "method not allowed\n");
        else if (file === undefined) send(404, "text/plain; charset=utf-8", "not found\n");
        else send(200, file.type, file.body);
      });
      const stop = () => server.close(() => resolve(0));
      server.on("error", (e: NodeJS.ErrnoException) => {
        printError(io, name, `cannot listen on ${urlHost(host)}:${port}: ${e.code === "EADDRINUSE" ? "the port is in use (try --port=0)" : e.message}`);
        resolve(1);
      });
      server.listen(port, host, () => {
        const address = server.address();
        const actual = typeof address === "object" && address !== null ? address.port : port;
        const named = [urlHost(host), ...(isLoopback(host) ? ["localhost", "127.0.0.1", "[::1]"] : [])];
        allowedHosts = new Set(named.map((h) => `${h}:${actual}`.toLowerCase()));
        io.stdout(`http://${urlHost(host)}:${actual}/\n`);
        io.stderr(`${name}: serving the inspector page from ${folder} (Ctrl-C to stop)\n`);
        process.once("SIGINT", stop);
        process.once("SIGTERM", stop);
      });
    });
  },
};
