/**
 * A wheel's `*.dist-info/RECORD` (PEP 376, PEP 427: CSV rows `path,sha256=<urlsafe base64, no padding>,size`)
 * with some rows rewritten and every other row byte for byte. Browser-safe: the CLI's zip editor
 * (src/packages/node/edit-zip.ts) and the inspector page's (src/browser/prune-package/zip.ts) both write it.
 */
import { latin1Decode, latin1Encode, utf8ToByteString } from "../../formats/bytes.js";

/** One RECORD row split as Python's csv module writes it (fields quoted when they hold a comma or quote). */
function csvFields(line: string): string[] {
  const fields: string[] = [];
  let at = 0;
  while (at <= line.length) {
    if (line[at] === '"') {
      let value = "";
      at++;
      while (at < line.length) {
        if (line[at] === '"' && line[at + 1] === '"') {
          value += '"';
          at += 2;
        } else if (line[at] === '"') {
          at++;
          break;
        } else value += line[at++];
      }
      fields.push(value);
      at++;
    } else {
      const end = line.indexOf(",", at);
      fields.push(line.slice(at, end < 0 ? line.length : end));
      at = end < 0 ? line.length + 1 : end + 1;
    }
  }
  return fields;
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** RECORD with the rows of `changed` (member path -> sha256, size) rewritten; other rows byte for byte. */
export function rewriteRecord(record: string, changed: ReadonlyMap<string, { sha256: string; size: number }>): string {
  const newline = record.includes("\r\n") ? "\r\n" : "\n";
  return record.split(newline).map((line) => {
    if (line === "") return line;
    const fields = csvFields(line);
    const now = changed.get(fields[0]!);
    if (now === undefined) return line;
    return [csvField(fields[0]!), `sha256=${now.sha256}`, String(now.size)].join(",");
  }).join(newline);
}

/**
 * RECORD's bytes with the rows of `changed` (member names as the zip's directory gives them) rewritten, every
 * other byte kept: the rows are handled as byte strings (one char per byte), so a byte-order mark or bytes that
 * are not UTF-8 come back as they were (a UTF-8 decode and encode would drop the one and replace the others).
 */
export function rewriteRecordBytes(record: Uint8Array, changed: ReadonlyMap<string, { sha256: string; size: number }>): Uint8Array {
  const byBytes = new Map([...changed].map(([path, now]) => [utf8ToByteString(path), now]));
  // A leading byte-order mark is kept, and is no part of the first row's path.
  const bom = record[0] === 0xef && record[1] === 0xbb && record[2] === 0xbf ? 3 : 0;
  return latin1Encode(latin1Decode(record.subarray(0, bom)) + rewriteRecord(latin1Decode(record.subarray(bom)), byBytes));
}
