/**
 * A package member's path as one safe file name, for `extract`'s outputs: `pkg.whl!torch_lib_x.so`.
 * Every level is kept (joined with `!`), and everything that could leave the output folder or confuse a
 * shell reading the listing is replaced by `_`: `/` and `\` (so no `../` and no absolute path survives;
 * the name is a single component that starts with the package's own name, so it is never `.` or `..`),
 * NUL and other control characters. A name past 200 UTF-16 units keeps its end (the member's own file
 * name) behind a short hash of the whole, so two long paths stay distinct.
 */
const MAX_NAME = 200;

function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

export function flattenMemberPath(packageName: string, member: readonly string[]): string {
  const base = packageName.slice(Math.max(packageName.lastIndexOf("/"), packageName.lastIndexOf("\\")) + 1);
  // eslint-disable-next-line no-control-regex
  const safe = (level: string) => level.replace(/[/\\\u0000-\u001f\u007f]/g, "_");
  const name = [base, ...member].map(safe).join("!");
  if (name.length <= MAX_NAME) return name;
  const hash = fnv1a(name);
  return `${safe(base).slice(0, 40)}!${hash}!${name.slice(name.length - (MAX_NAME - 50))}`;
}
