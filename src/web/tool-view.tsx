// One MCP tool as a person reads it (docs/manifest-format.md "Tools"): name, title, description, what it may touch in
// words, its annotations (hints, not guarantees), and its schemas folded until opened. Icons are named, never loaded.

import type { FC } from 'hono/jsx';
import { truncateText } from '../core/text.ts';
import type { Manifest } from '../pipeline/index.ts';
import { describeAnnotations, describeCapabilities, describeNoClaim } from './capability-words.ts';

type ManifestTool = Manifest['tools'][number];

export const ToolView: FC<{ tool: ManifestTool; index: number }> = ({ tool, index }) => (
  <article class="tool" id={`tool-${index}`} data-tool-index={String(index)} aria-labelledby={`tool-${index}-name`}>
    <h3 id={`tool-${index}-name`}>
      <span class="tool-name">{tool.name}</span>
      {tool.title !== undefined && <span class="tool-title"> — {tool.title}</span>}
    </h3>
    {tool.description !== undefined && <p class="description">{tool.description}</p>}
    <p class="muted may-touch">What it may touch (the publisher's signed declaration):</p>
    <CapabilityList tool={tool} />
    <ToolHints tool={tool} />
    <SchemaDetails label="Input schema" value={tool.inputSchema} />
    {tool.outputSchema !== undefined && <SchemaDetails label="Output schema" value={tool.outputSchema} />}
    {tool._meta !== undefined && <SchemaDetails label="_meta" value={tool._meta} />}
  </article>
);

const CapabilityList: FC<{ tool: ManifestTool }> = ({ tool }) => {
  if (tool.capabilities === undefined) {
    return (
      <ul class="words capabilities" aria-label={`What ${tool.name} may touch`}>
        <li class="no-claim">declares no capabilities: what it touches is unknown, not none</li>
      </ul>
    );
  }
  return (
    <ul class="words capabilities" aria-label={`What ${tool.name} may touch`}>
      {describeCapabilities(tool.capabilities).flatMap((area) =>
        area.claim === 'no-claim' ? (
          <li class="no-claim" data-area={area.area}>
            {describeNoClaim(area.area)}
          </li>
        ) : (
          area.phrases.map((phrase) => <li data-area={area.area}>{phrase}</li>)
        ),
      )}
    </ul>
  );
};

const ToolHints: FC<{ tool: ManifestTool }> = ({ tool }) => {
  const hints = describeAnnotations(tool.annotations);
  const task = tool.execution?.taskSupport;
  const icons = tool.icons ?? [];
  return (
    <>
      {hints.length > 0 && (
        <p class="annotations">
          <span class="muted">Annotations (hints, not guarantees):</span> {hints.join('; ')}
        </p>
      )}
      {task !== undefined && (
        <p class="execution">
          <span class="muted">Task support:</span> {task}
        </p>
      )}
      {icons.length > 0 && (
        <p class="icons">
          <span class="muted">Icons (not loaded by this page):</span>{' '}
          {icons.map((icon) => truncateText(icon.src, 120)).join(', ')}
        </p>
      )}
    </>
  );
};

const SchemaDetails: FC<{ label: string; value: unknown }> = ({ label, value }) => (
  <details>
    <summary>{label}</summary>
    <pre>{JSON.stringify(value, null, 2)}</pre>
  </details>
);
