reproduce
--published
@DATA@/published-bad
