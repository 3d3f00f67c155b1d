reproduce
--differences
--format
csv
--published
@DATA@/published-stale
