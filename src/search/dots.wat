(module
  (memory (export "memory") 1)
  ;; out[r] = f32(dot(data8[r*stride ..), q8)) * scales[r] * $qs for r < rows: signed bytes, stride a multiple of 32.
  (func (export "dots8") (param $q i32) (param $data i32) (param $rows i32) (param $stride i32) (param $scales i32) (param $qs f32) (param $out i32)
    (local $r i32) (local $i i32) (local $p i32) (local $a v128) (local $b v128) (local $x v128) (local $y v128)
    (local.set $p (local.get $data))
    (block $done
      (loop $each_row
        (br_if $done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $a (v128.const i32x4 0 0 0 0))
        (local.set $b (v128.const i32x4 0 0 0 0))
        (local.set $i (i32.const 0))
        (block $row_done
          (loop $each_lane
            (br_if $row_done (i32.ge_u (local.get $i) (local.get $stride)))
            (local.set $x (v128.load (i32.add (local.get $p) (local.get $i))))
            (local.set $y (v128.load (i32.add (local.get $q) (local.get $i))))
            (local.set $a (i32x4.add (local.get $a)
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $x)) (i16x8.extend_low_i8x16_s (local.get $y)))))
            (local.set $b (i32x4.add (local.get $b)
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $x)) (i16x8.extend_high_i8x16_s (local.get $y)))))
            (local.set $x (v128.load offset=16 (i32.add (local.get $p) (local.get $i))))
            (local.set $y (v128.load offset=16 (i32.add (local.get $q) (local.get $i))))
            (local.set $a (i32x4.add (local.get $a)
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $x)) (i16x8.extend_low_i8x16_s (local.get $y)))))
            (local.set $b (i32x4.add (local.get $b)
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $x)) (i16x8.extend_high_i8x16_s (local.get $y)))))
            (local.set $i (i32.add (local.get $i) (i32.const 32)))
            (br $each_lane)))
        (local.set $a (i32x4.add (local.get $a) (local.get $b)))
        (f32.store (i32.add (local.get $out) (i32.shl (local.get $r) (i32.const 2)))
          (f32.mul
            (f32.mul
              (f32.convert_i32_s
                (i32.add (i32.add (i32x4.extract_lane 0 (local.get $a)) (i32x4.extract_lane 1 (local.get $a)))
                         (i32.add (i32x4.extract_lane 2 (local.get $a)) (i32x4.extract_lane 3 (local.get $a)))))
              (f32.load (i32.add (local.get $scales) (i32.shl (local.get $r) (i32.const 2)))))
            (local.get $qs)))
        (local.set $p (i32.add (local.get $p) (local.get $stride)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $each_row)))
  )
)
