# tfdebug_set_warnings(target): the warning set every target of ours builds clean with.
# Never -ffast-math anywhere: NaN and Inf detection depends on IEEE semantics.
function(tfdebug_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    $<$<BOOL:${TFDEBUG_WERROR}>:-Werror>)
endfunction()
