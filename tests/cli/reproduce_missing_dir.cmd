reproduce
--published
@DATA@/no-such-dir
