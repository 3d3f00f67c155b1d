analyse
