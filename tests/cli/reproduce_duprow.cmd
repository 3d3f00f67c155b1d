reproduce
--published
@DATA@/published-duprow
