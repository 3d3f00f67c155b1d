reproduce
--format
csv
--published
@DATA@/../../../tables/published
