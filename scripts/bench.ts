// `npm run bench [-- section ...]`: run the benchmark sections in sequence and print one report.
// Sections: pipeline, log, http, and the optional host and guard (scripts/bench-host.ts exporting benchHost,
// scripts/bench-guard.ts exporting benchGuard), picked up by dynamic import when their file exists.
// Each section returns its report lines; a failing section is reported and the others still run (exit code 1).

import { existsSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { benchHttp } from './bench-http.ts';
import { benchLog } from './bench-log.ts';
import { benchPipeline } from './bench-pipeline.ts';

type BenchFunction = () => Promise<string[]>;

interface Section {
  name: string;
  /** A statically imported section, or the module and export to load when its file exists. */
  run: BenchFunction | { file: string; exportName: string };
}

const SECTIONS: readonly Section[] = [
  { name: 'pipeline', run: benchPipeline },
  { name: 'log', run: benchLog },
  { name: 'http', run: benchHttp },
  { name: 'host', run: { file: './bench-host.ts', exportName: 'benchHost' } },
  { name: 'guard', run: { file: './bench-guard.ts', exportName: 'benchGuard' } },
  { name: 'http-guard', run: { file: './bench-http-guard.ts', exportName: 'benchHttpGuard' } },
  { name: 'mirror', run: { file: './bench-mirror.ts', exportName: 'benchMirror' } },
  { name: 'approvals', run: { file: './bench-approvals.ts', exportName: 'benchApprovals' } },
  { name: 'postgres', run: { file: './bench-postgres.ts', exportName: 'benchPostgres' } },
  { name: 'telemetry', run: { file: './bench-telemetry.ts', exportName: 'benchTelemetry' } },
  { name: 'witness', run: { file: './bench-witness.ts', exportName: 'benchWitness' } },
];

/** The section's function, or a reason it has none (its optional file is absent or exports no such function). */
async function resolveSection(section: Section): Promise<BenchFunction | string> {
  if (typeof section.run === 'function') return section.run;
  const url = new URL(section.run.file, import.meta.url);
  if (!existsSync(fileURLToPath(url)))
    return `${section.name} bench missing (no scripts/${section.run.file.slice(2)} yet)`;
  const module = (await import(url.href)) as Record<string, unknown>;
  const run = module[section.run.exportName];
  if (typeof run !== 'function')
    return `${section.name} bench: scripts/${section.run.file.slice(2)} does not export ${section.run.exportName}()`;
  return run as BenchFunction;
}

async function main(args: string[]): Promise<number> {
  const wanted = args.filter((arg) => arg !== '--');
  const unknown = wanted.filter((name) => !SECTIONS.some((section) => section.name === name));
  if (unknown.length > 0) {
    console.error(
      `unknown bench section ${unknown.join(', ')}; sections: ${SECTIONS.map((section) => section.name).join(', ')}`,
    );
    return 2;
  }
  const chosen = wanted.length === 0 ? SECTIONS : SECTIONS.filter((section) => wanted.includes(section.name));
  console.log(
    `toolseal bench — node ${process.version}, ${availableParallelism()} CPUs, load average ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}; ` + `sections: ${chosen.map((section) => section.name).join(', ')}`,
  );
  const started = performance.now();
  let failed = false;
  for (const section of chosen) {
    console.log(`\n== ${section.name} ==`);
    const sectionStarted = performance.now();
    try {
      const run = await resolveSection(section);
      if (typeof run === 'string') {
        console.log(run);
        // Asked for by name, a missing section is a failure; in a full run it is only noted.
        if (wanted.length > 0) failed = true;
        continue;
      }
      for (const line of await run()) console.log(line);
    } catch (error) {
      failed = true;
      console.log(
        `${section.name} bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    }
    console.log(`(${section.name}: ${((performance.now() - sectionStarted) / 1000).toFixed(1)} s)`);
  }
  console.log(
    `\nbench done in ${((performance.now() - started) / 1000).toFixed(1)} s${failed ? ' — with failures' : ''}`,
  );
  return failed ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
