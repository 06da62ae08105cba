int ext(void){return 0;}
