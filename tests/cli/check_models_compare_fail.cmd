check
--model
bloom-560m,mpt-7b
--ctx
2k
--max-blind-heads
4
