// Types only: see pi-agent-core.d.ts.
