"""Pure text and report logic: no database, no network. Sentences, citations, links and
headers; a page's key facts and what changed in it (material edits, passage changes);
claim anchors and where a quote went; a report's structure, parse and render; relevance
and the budgets that prune a report."""
