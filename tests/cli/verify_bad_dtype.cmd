verify
--dtype
fp7
