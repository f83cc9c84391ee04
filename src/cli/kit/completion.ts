/**
 * `offload-kit completion bash|zsh|fish`: prints a shell completion script. Nothing in it is written by hand:
 * the commands, their options and what each option's value can be are read from the COMMANDS table and each
 * subcommand's option spec (the ones `--help` prints), and GPU names from the processor tables of
 * src/target-id, so a new option or processor is completed without touching this file.
 *
 * What a value completes to is read from the spec: an enum's values; a `valueName` spelled `a|b|c` (sizes --by,
 * compress --format, the shell here); GPUs for `gpu` / `target id` (the AMDGPU and NVIDIA processor names plus
 * `native`, a processor's xnack/sramecc settings after `gfx90a:`, each item of a comma-separated list);
 * folders for `dir`; files for `file` and for the file operands; nothing for numbers and the rest.
 */
import { CHECK_KINDS } from "../../inspect/check.js";
import { AMDGCN_PROCESSORS, OFFLOAD_ARCH_NAMES, isNvptxSmName } from "../../target-id/index.js";
import { buildOptionTable, stringValue } from "../args.js";
import type { TableEntry } from "../args.js";
import type { Subcommand } from "./common.js";
import { KIT_CATEGORY as category, VERSION_TEXT, examplesHelp, usageError } from "./common.js";

export const SHELLS = ["bash", "zsh", "fish"] as const;
type Shell = (typeof SHELLS)[number];

/** What an option's value (or an operand) completes to. */
export type ValueCompletion =
  | { readonly kind: "none" }
  | { readonly kind: "files" }
  | { readonly kind: "dirs" }
  | { readonly kind: "words"; readonly words: readonly string[] }
  | { readonly kind: "gpus"; readonly list: boolean };

export interface CompletedOption {
  /** Without dashes, as the spec names it. */
  readonly name: string;
  /** `-o` for one letter, `--name` otherwise (LLVM takes either number of dashes; completion offers one). */
  readonly spelling: string;
  readonly description: string;
  /** undefined for a flag. */
  readonly value: ValueCompletion | undefined;
}

export interface CompletedCommand {
  readonly name: string;
  readonly summary: string;
  readonly options: readonly CompletedOption[];
  /** What the operands complete to; undefined when the command takes none. */
  readonly operands: ValueCompletion | undefined;
}

/** Value names whose words live in code rather than in the spec's `valueName`. */
const WORDS_BY_VALUE_NAME: Readonly<Record<string, readonly string[]>> = { "offload kind": CHECK_KINDS };
const GPU_VALUE_NAMES = new Set(["gpu", "target id"]);

function valueCompletion(entry: TableEntry): ValueCompletion {
  if (entry.kind === "enum") return { kind: "words", words: entry.values.map((v) => v.name) };
  const valueName = entry.valueName;
  if (GPU_VALUE_NAMES.has(valueName)) return { kind: "gpus", list: entry.commaSeparated };
  if (Object.hasOwn(WORDS_BY_VALUE_NAME, valueName)) return { kind: "words", words: WORDS_BY_VALUE_NAME[valueName]! };
  if (/^[\w-]+(\|[\w-]+)+$/.test(valueName)) return { kind: "words", words: valueName.split("|") };
  if (valueName === "dir") return { kind: "dirs" };
  if (valueName === "file" || entry.positional) return { kind: "files" };
  return { kind: "none" };
}

/** The completion model of every command, from the table `offload-kit` dispatches on. */
export function completionModel(commands: Readonly<Record<string, Subcommand>>): CompletedCommand[] {
  const model = Object.entries(commands).map(([name, command]): CompletedCommand => {
    const table = buildOptionTable(command.spec());
    const options = table.named
      .filter((e) => e.visibility === "shown")
      .map((e) => ({
        name: e.name,
        spelling: e.name.length === 1 ? `-${e.name}` : `--${e.name}`,
        description: e.description.split("\n")[0]!,
        value: e.kind === "flag" ? undefined : valueCompletion(e),
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
    const operand = table.positionals[0];
    return { name, summary: command.summary, options, operands: operand === undefined ? undefined : valueCompletion(operand) };
  });
  const none: CompletedOption[] = [];
  model.push({ name: "help", summary: "Print the usage.", options: none, operands: undefined });
  model.push({ name: "version", summary: "Print the version.", options: none, operands: undefined });
  return model;
}

/** GPU names a value can take: every AMDGCN processor and NVIDIA sm_XX clang knows, and `native`. */
export function gpuNames(): string[] {
  const sm = [...OFFLOAD_ARCH_NAMES[22]].filter(isNvptxSmName);
  return [...AMDGCN_PROCESSORS.map((p) => p.name), ...sm, "native"];
}

/** Processors grouped by the target-ID features they take (newest table that knows them). */
function processorsByFeatures(): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const p of AMDGCN_PROCESSORS) {
    const features = p.support[22] ?? p.support[19] ?? p.support[14];
    if (features === undefined) continue;
    const key = [...(features.sramecc ? ["sramecc"] : []), ...(features.xnack ? ["xnack"] : [])].join(" ");
    if (key === "") continue;
    groups.set(key, [...(groups.get(key) ?? []), p.name]);
  }
  return groups;
}

/** A word for a single-quoted shell string. */
function quoted(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

function valueKindText(value: ValueCompletion): string {
  switch (value.kind) {
    case "words": return `words ${value.words.join(" ")}`;
    case "gpus": return value.list ? "gpulist" : "gpus";
    default: return value.kind;
  }
}

function bashScript(model: readonly CompletedCommand[]): string {
  const commandCases = model.map((c) => `    ${c.name}) echo ${quoted(c.options.map((o) => (o.value === undefined || o.spelling.length === 2 ? o.spelling : `${o.spelling}=`)).join(" "))} ;;`);
  const valueCases = model.flatMap((c) => c.options.filter((o) => o.value !== undefined).map((o) => `    ${quoted(`${c.name} ${o.name}`)}) echo ${quoted(valueKindText(o.value!))} ;;`));
  const operandCases = model.filter((c) => c.operands !== undefined).map((c) => `    ${c.name}) echo ${quoted(valueKindText(c.operands!))} ;;`);
  const featureCases = [...processorsByFeatures()].map(([features, names]) => `    ${names.join("|")}) echo ${quoted(features)} ;;`);
  return `# offload-kit bash completion, generated by \`offload-kit completion bash\` (${VERSION_TEXT.trim()}).
# Load it with:  source <(offload-kit completion bash)   or save it as
# ~/.local/share/bash-completion/completions/offload-kit

_offload_kit_commands=${quoted(model.map((c) => c.name).join(" "))}
_offload_kit_gpus=${quoted(gpuNames().join(" "))}

# The options of a command, value-taking long ones with their '='.
_offload_kit_options() {
  case "$1" in
${commandCases.join("\n")}
  esac
}

# What the value of option $2 of command $1 completes to (nothing for a flag).
_offload_kit_value_kind() {
  case "$1 $2" in
${valueCases.join("\n")}
  esac
}

_offload_kit_operand_kind() {
  case "$1" in
${operandCases.join("\n")}
  esac
}

# The target-ID features a processor takes.
_offload_kit_features() {
  case "$1" in
${featureCases.join("\n")}
  esac
}

# Candidates for a value of kind $1, the value typed so far being $2; each is printed after prefix $3.
_offload_kit_values() {
  local kind="$1" value="$2" prefix="$3" head="" last item feature
  case "$kind" in
    files) compgen -f -- "$value" | while IFS= read -r item; do printf '%s\\n' "$prefix$item"; done ;;
    dirs) compgen -d -- "$value" | while IFS= read -r item; do printf '%s\\n' "$prefix$item"; done ;;
    words\\ *) for item in \${kind#words }; do [[ "$item" == "$value"* ]] && printf '%s\\n' "$prefix$item"; done ;;
    gpus|gpulist)
      last="$value"
      if [[ "$kind" == gpulist && "$value" == *,* ]]; then head="\${value%,*},"; last="\${value##*,}"; fi
      if [[ "$last" == *:* ]]; then
        for feature in $(_offload_kit_features "\${last%%:*}"); do
          [[ "$last" == *":$feature"[+-]* ]] && continue
          printf '%s\\n' "$prefix$head\${last%:*}:$feature+" "$prefix$head\${last%:*}:$feature-" |
            while IFS= read -r item; do [[ "$item" == "$prefix$head$last"* ]] && printf '%s\\n' "$item"; done
        done
      else
        for item in $_offload_kit_gpus; do [[ "$item" == "$last"* ]] && printf '%s\\n' "$prefix$head$item"; done
      fi ;;
  esac
}

_offload_kit() {
  # Words are taken from the line itself: bash splits COMP_WORDS at '=' and ':', which --keep=gfx90a:xnack+ has.
  local line="\${COMP_LINE:0:\${COMP_POINT:-\${#COMP_LINE}}}"
  local -a words=()
  read -r -a words <<< "$line"
  if [[ -z "$line" || "$line" == *[[:space:]] ]]; then words+=(""); fi
  local count=\${#words[@]}
  local cur="\${words[count-1]}" prev="" command="" option kind item
  (( count > 2 )) && prev="\${words[count-2]}" && command="\${words[1]}"
  local -a candidates=()
  if (( count <= 2 )); then
    for item in $_offload_kit_commands; do [[ "$item" == "$cur"* ]] && candidates+=("$item"); done
  elif [[ "$cur" == -*=* ]]; then
    option="\${cur%%=*}"
    kind="$(_offload_kit_value_kind "$command" "\${option##*-}")"
    [[ -z "$kind" ]] && kind="$(_offload_kit_value_kind "$command" "\${option#-}")"
    [[ -z "$kind" ]] && kind="$(_offload_kit_value_kind "$command" "\${option#--}")"
    [[ -n "$kind" ]] && mapfile -t candidates < <(_offload_kit_values "$kind" "\${cur#*=}" "$option=")
  elif [[ "$prev" == -* && "$prev" != *=* ]] && kind="$(_offload_kit_value_kind "$command" "\${prev#-}")" &&
       { [[ -n "$kind" ]] || kind="$(_offload_kit_value_kind "$command" "\${prev#--}")"; } && [[ -n "$kind" ]]; then
    mapfile -t candidates < <(_offload_kit_values "$kind" "$cur" "")
  elif [[ "$cur" == -* ]]; then
    for item in $(_offload_kit_options "$command"); do [[ "$item" == "$cur"* ]] && candidates+=("$item"); done
  else
    kind="$(_offload_kit_operand_kind "$command")"
    [[ -n "$kind" ]] && mapfile -t candidates < <(_offload_kit_values "$kind" "$cur" "")
  fi
  # Readline replaces only what follows the last COMP_WORDBREAKS character of the word: cut that much off.
  local cut=0 i
  for (( i = \${#cur} - 1; i >= 0; i-- )); do
    if [[ "\${COMP_WORDBREAKS-}" == *"\${cur:i:1}"* ]]; then cut=$(( i + 1 )); break; fi
  done
  COMPREPLY=()
  for item in "\${candidates[@]}"; do COMPREPLY+=("\${item:cut}"); done
  # After '--keep=' no space: another value may follow a ','. Outside a completion compopt fails; that is fine.
  if (( \${#COMPREPLY[@]} == 1 )) && [[ "\${COMPREPLY[0]}" == *= ]]; then compopt -o nospace 2>/dev/null; fi
  [[ "$kind" == files || "$kind" == dirs ]] && compopt -o filenames 2>/dev/null
  return 0
}

complete -F _offload_kit offload-kit
`;
}

/** Text inside a zsh _arguments `[...]` description or `(...)` list. */
function zshEscape(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/([[\]:'])/g, (m) => (m === "'" ? "'\\''" : `\\${m}`));
}

function zshAction(value: ValueCompletion): string {
  switch (value.kind) {
    case "files": return "_files";
    case "dirs": return "_files -/";
    case "words": return `(${value.words.join(" ")})`;
    case "gpus": return value.list ? "_offload_kit_gpus list" : "_offload_kit_gpus";
    case "none": return " ";
  }
}

function zshScript(model: readonly CompletedCommand[]): string {
  const commandLines = model.map((c) => `    ${quoted(`${c.name}:${c.summary.replace(/:/g, "\\:")}`)}`);
  const cases = model.map((c) => {
    const specs = c.options.map((o) => {
      const description = zshEscape(o.description);
      if (o.value === undefined) return `'${o.spelling}[${description}]'`;
      const form = o.spelling.length === 2 ? o.spelling : `${o.spelling}=`;
      return `'${form}[${description}]:${zshEscape(o.name)}:${zshAction(o.value)}'`;
    });
    if (c.operands !== undefined) specs.push(`'*:operand:${zshAction(c.operands)}'`);
    return `      ${c.name})\n        _arguments -S \\\n          ${specs.join(" \\\n          ")} ;;`;
  });
  const featureCases = [...processorsByFeatures()].map(([features, names]) => `    ${names.join("|")}) features=(${features}) ;;`);
  return `#compdef offload-kit
# offload-kit zsh completion, generated by \`offload-kit completion zsh\` (${VERSION_TEXT.trim()}).
# Load it with:  source <(offload-kit completion zsh)   (after compinit), or save it as _offload-kit in $fpath.

_offload_kit_gpus() {
  local -a gpus features candidates
  gpus=(${gpuNames().join(" ")})
  [[ "$1" == list ]] && compset -P '*,'
  if [[ "$PREFIX" == *:* ]]; then
    case "\${PREFIX%%:*}" in
${featureCases.join("\n")}
    esac
    local feature
    for feature in $features; do candidates+=("$feature+" "$feature-"); done
    compset -P '*:'
    compadd -- $candidates
  else
    compadd -- $gpus
  fi
}

_offload_kit() {
  local curcontext="$curcontext" state line
  local -a commands
  commands=(
${commandLines.join("\n")}
  )
  _arguments -C '1:command:->command' '*::argument:->argument'
  case $state in
    command) _describe -t commands 'offload-kit command' commands ;;
    argument)
      case $words[1] in
${cases.join("\n")}
      esac ;;
  esac
}

if [[ "\${funcstack[1]}" == _offload_kit ]]; then
  _offload_kit "$@"
else
  compdef _offload_kit offload-kit
fi
`;
}

function fishQuoted(text: string): string {
  return `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
}

function fishScript(model: readonly CompletedCommand[]): string {
  const lines: string[] = [];
  const names = model.map((c) => c.name).join(" ");
  for (const c of model) lines.push(`complete -c offload-kit -n "not __fish_seen_subcommand_from ${names}" -a ${c.name} -d ${fishQuoted(c.summary)}`);
  for (const c of model) {
    const when = `-n "__fish_seen_subcommand_from ${c.name}"`;
    for (const o of c.options) {
      const flag = o.spelling.length === 2 ? `-s ${o.name}` : `-l ${o.name}`;
      let value = "";
      if (o.value !== undefined) {
        switch (o.value.kind) {
          case "files": value = " -r -F"; break;
          case "dirs": value = " -x -a '(__fish_complete_directories)'"; break;
          case "words": value = ` -x -a ${fishQuoted(o.value.words.join(" "))}`; break;
          case "gpus": value = ` -x -a '(__offload_kit_gpus${o.value.list ? " list" : ""})'`; break;
          case "none": value = " -x"; break;
        }
      }
      lines.push(`complete -c offload-kit ${when} ${flag}${value} -d ${fishQuoted(o.description)}`);
    }
    if (c.operands?.kind === "files") lines.push(`complete -c offload-kit ${when} -F`);
    else if (c.operands?.kind === "words") lines.push(`complete -c offload-kit ${when} -a ${fishQuoted(c.operands.words.join(" "))}`);
  }
  const featureCases = [...processorsByFeatures()].map(([features, names]) => `        case ${names.join(" ")}\n            set features ${features}`);
  return `# offload-kit fish completion, generated by \`offload-kit completion fish\` (${VERSION_TEXT.trim()}).
# Load it with:  offload-kit completion fish | source   or save it as ~/.config/fish/completions/offload-kit.fish

function __offload_kit_gpus
    set -l value (string replace -r -- '^-{1,2}[a-z-]+=' '' (commandline -ct))
    set -l head ''
    if test "$argv[1]" = list; and string match -q -- '*,*' $value
        set head (string replace -r -- '[^,]*$' '' $value)
        set value (string replace -r -- '^.*,' '' $value)
    end
    if string match -q -- '*:*' $value
        set -l features
        switch (string split -f1 -- : $value)
${featureCases.join("\n")}
        end
        set -l stem (string replace -r -- ':[^:]*$' '' $value)
        for feature in $features
            printf '%s\\n' $head$stem:$feature+ $head$stem:$feature-
        end
    else
        for gpu in ${gpuNames().join(" ")}
            printf '%s\\n' $head$gpu
        end
    end
end

complete -c offload-kit -f
${lines.join("\n")}
`;
}

export function completionScript(shell: Shell, commands: Readonly<Record<string, Subcommand>>): string {
  const model = completionModel(commands);
  switch (shell) {
    case "bash": return bashScript(model);
    case "zsh": return zshScript(model);
    case "fish": return fishScript(model);
  }
}

/** The subcommand, reading the command table only when run (the table holds this command too). */
export function completionCommand(commands: () => Readonly<Record<string, Subcommand>>): Subcommand {
  return {
    summary: "Print a shell completion script: completion bash|zsh|fish (e.g. source <(offload-kit completion bash)).",
    spec: () => ({
      overview: "offload-kit completion: print a completion script for bash, zsh or fish\n",
      options: [{ name: "shell", kind: "string", positional: true, valueName: SHELLS.join("|"), description: SHELLS.join("|"), category }],
      version: VERSION_TEXT,
      epilogue: examplesHelp([
        { command: "offload-kit completion bash > ~/.local/share/bash-completion/completions/offload-kit", what: "Install bash completion for your user (or, for this shell only: source <(offload-kit completion bash))" },
        { command: "offload-kit completion zsh > ~/.zfunc/_offload-kit", what: "zsh: with ~/.zfunc in $fpath before compinit runs" },
        { command: "offload-kit completion fish > ~/.config/fish/completions/offload-kit.fish", what: "fish: loaded the next time fish starts" },
      ]),
    }),
    run(values, { name, io }) {
      const shell = stringValue(values, "shell");
      if (!(SHELLS as readonly string[]).includes(shell)) {
        return usageError(io, name, shell === "" ? `name a shell: ${SHELLS.join(", ")}` : `no completion for '${shell}': give one of ${SHELLS.join(", ")}`);
      }
      io.stdout(completionScript(shell as Shell, commands()));
      return 0;
    },
  };
}
