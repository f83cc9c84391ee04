/** A one-line progress bar on stderr for long batch runs (only drawn on a terminal or on request). */
import type { CliIO } from "./io.js";

export class ProgressBar {
  private last = 0;
  private drawn = false;

  constructor(private readonly io: CliIO, private readonly label: string) {}

  update(done: number, total: number): void {
    const now = performance.now();
    // Redraw at most ten times a second, and always at the end.
    if (done < total && now - this.last < 100) return;
    this.last = now;
    const width = 30;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    this.io.stderr(`\r${this.label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total}`);
    this.drawn = true;
  }

  finish(): void {
    if (this.drawn) this.io.stderr("\n");
  }
}
