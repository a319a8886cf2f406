(module
  (memory (export "memory") 1)
  ;; out[r] = dot(data[r*dim .. r*dim+dim), q) for r < rows; dim a multiple of 8 (callers pad with zeros).
  (func (export "dots") (param $q i32) (param $data i32) (param $rows i32) (param $dim i32) (param $out i32)
    (local $r i32) (local $i i32) (local $p i32) (local $a v128) (local $b v128) (local $bytes i32)
    (local.set $bytes (i32.shl (local.get $dim) (i32.const 2)))
    (local.set $p (local.get $data))
    (block $done
      (loop $each_row
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $a (v128.const i32x4 0 0 0 0))
        (local.set $b (v128.const i32x4 0 0 0 0))
        (local.set $i (i32.const 0))
        (block $row_done
          (loop $each_lane
            (br_if $row_done (i32.ge_u (local.get $i) (local.get $bytes)))
            (local.set $a (f32x4.add (local.get $a)
              (f32x4.mul (v128.load (i32.add (local.get $p) (local.get $i))) (v128.load (i32.add (local.get $q) (local.get $i))))))
            (local.set $b (f32x4.add (local.get $b)
              (f32x4.mul (v128.load offset=16 (i32.add (local.get $p) (local.get $i))) (v128.load offset=16 (i32.add (local.get $q) (local.get $i))))))
            (local.set $i (i32.add (local.get $i) (i32.const 32)))
            (br $each_lane)))
        (local.set $a (f32x4.add (local.get $a) (local.get $b)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32.add (f32.add (f32x4.extract_lane 0 (local.get $a)) (f32x4.extract_lane 1 (local.get $a)))
                   (f32.add (f32x4.extract_lane 2 (local.get $a)) (f32x4.extract_lane 3 (local.get $a)))))
        (local.set $p (i32.add (local.get $p) (local.get $bytes)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $each_row))))
)
