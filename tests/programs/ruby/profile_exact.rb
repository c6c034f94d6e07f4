# Calls Integer#gcd (C function rb_gcd, where the tests put a uprobe) exactly 300 times from
# `left` and 200 times from `right`: counts every profile format must reproduce exactly.
def mark
  1.gcd(1)
end

def left
  300.times { mark }
end

def right
  200.times { mark }
end

left
right
