check
--model
bloom
--max-blind-heads
-1
