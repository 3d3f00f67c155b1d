verify
--dtype
all
