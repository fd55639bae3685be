"""The team server: the PostgreSQL backend of the store's index, projects, tokens, notes, the HTTP
API and `compile-viz serve` (docs/team.md). Nothing here is imported unless a team command runs."""
