reproduce
--published
@DATA@/published-norows
