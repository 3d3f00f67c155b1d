rope
--shift
16,0
