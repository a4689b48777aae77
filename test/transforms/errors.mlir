// RUN: not stablehlo-bnfold-opt %s --split-input-file --stablehlo-fold-batch-norm=no-such-option=1 2>&1 \
// RUN:   | FileCheck --check-prefix=OPTION %s
// RUN: not stablehlo-bnfold-opt %s --split-input-file --stablehlo-fold-batch-norm 2>&1 \
// RUN:   | FileCheck --check-prefix=SYNTAX %s

// CLI errors are one line on stderr, mlir-opt style, with a nonzero exit code and no
// traceback. With --split-input-file each chunk is processed on its own: a chunk that does
// not parse is reported at its location in the whole file, and the other chunks still run.

// An unknown pass option: reported without a location, since it is not in the file.
// OPTION:        {{^}}stablehlo-bnfold-opt: error: unknown option 'no-such-option=1' for stablehlo-fold-batch-norm; known: {{.+}}{{$}}
// OPTION-NOT:    Traceback
// OPTION-NOT:    func.func

// A syntax error in the second chunk: one `file:line:col: error: message` line. The first
// chunk is still processed and printed; the second is not.
// SYNTAX-DAG:    {{^.*}}errors.mlir:[[# @LINE + 11]]:27: error: expected ','{{$}}
// SYNTAX-DAG:    func.func @valid(
// SYNTAX-NOT:    Traceback
// SYNTAX-NOT:    func.func @syntax_error
func.func @valid(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  return %arg0 : tensor<2xf32>
}

// -----

func.func @syntax_error(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %arg0 %arg0 : tensor<2xf32>
  return %0 : tensor<2xf32>
}
